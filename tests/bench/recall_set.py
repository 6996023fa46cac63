"""The data set of the recall benchmark (`tests.bench.recall`), written for it.

`FACTS`: personal facts of the kind people ask a chatbot to keep (pets, family, health, work,
home, travel, tastes, numbers and dates), each with two questions a person would ask later,
reworded so that most share no content word with the fact: words alone cannot find them,
meaning has to. They are one person's notes, and consistent with each other (the same
husband, son and dog throughout).

`distractors(count)`: other notes of the same everyday kind (errands, recommendations,
friends' news, things read, prices, plans), made from templates and word lists with a fixed
seed, the same ones every run. None answers a question of `FACTS`: they are about other
people, other places and one-off things, and `check` makes sure that no name, place, shop or
number of theirs is one a fact speaks of.
"""

from __future__ import annotations

import random
import re
import string

from bot.store.memory import fold, words

Fact = tuple[str, str, str]  # the fact, and two questions it answers

PETS: list[Fact] = [
    ("Dog: Rex, a beagle adopted in 2019", "Remind me what name my pet has?",
     "Which breed is my pup, and since when has he lived with me?"),
    ("My cat Mochi only eats the salmon-flavoured Felix pouches",
     "Which food will my kitty accept?", "What brand should I buy when feeding the feline?"),
    ("The vet for our animals is Dr. Haruka Sato at Greenway Clinic",
     "Who treats my pets when they are sick?",
     "Where do I bring the kitty for her vaccinations?"),
    ("Mochi's flea treatment is due on the first of every month",
     "When should the cat get her parasite drops?",
     "How often do I apply the anti-bug medicine to my kitty?"),
    ("Our goldfish is called Bubbles and lives in the tank in the hallway",
     "What did we name the little swimmer?", "Where is the aquarium kept?"),
    ("Rex is allergic to chicken, so his kibble is lamb and rice",
     "Which protein must my pup avoid?", "What flavour of dry food does the beagle get?"),
    ("The dog walker, Tomasz, comes on Tuesdays and Thursdays at noon",
     "Who takes my pup out midweek?", "Which days does the person who exercises Rex come?"),
    ("My parrot Kiwi is 23 years old and says 'hello sailor'", "How old is the bird?",
     "What phrase does my talking feathered friend repeat?"),
    ("Rex's microchip number is 985112004837261", "What ID is implanted in my pup?",
     "Which code identifies the beagle if he gets lost?"),
    ("Pet insurance: Petplan, policy PP-7730-21, renews each April",
     "Who covers the vet bills for the animals?",
     "When does the cover for my cat and pup roll over?"),
    ("The hamster, Nugget, belongs to my daughter and lives in her room",
     "Whose little rodent is it?", "What is the furry creature upstairs called?"),
    ("Kiwi the parrot eats sunflower seeds but never avocado, which is toxic to him",
     "What fruit is poisonous for my bird?", "Which snack does my feathered friend get?"),
    ("Mochi was born on 3 May 2020", "How old is my kitty?", "When is the cat's birthday?"),
    ("Rex's groomer is Paws & Claws on Elm Road, every six weeks",
     "Where does the pup get his haircut?", "How often does the beagle need a trim?"),
    ("Horse riding: I lease a mare named Stella at Brookfield Stables",
     "Which animal do I sit on at weekends?", "Where is the equestrian centre I go to?"),
    ("Cat sitter when we travel: our neighbour Ingrid, key under the blue pot",
     "Who feeds the kitty when we are away?",
     "Where did I hide the spare for the person minding Mochi?"),
]  # fmt: skip

FAMILY: list[Fact] = [
    ("My sister Anna lives in Lyon with her husband Marc",
     "Which city is my sibling based in?", "What is my brother-in-law called?"),
    ("Mum's birthday is 14 March", "When should I call my mother to congratulate her?",
     "What day does my mom turn a year older?"),
    ("Dad takes 5 mg of amlodipine for his blood pressure", "What pill is my father on?",
     "Which heart medication does my old man need?"),
    ("My son Leo is in year 4 at Oakwood Primary; his teacher is Mr. Patel",
     "Which school does my boy attend?", "Who teaches my kid this year?"),
    ("Leo is allergic to peanuts and carries an EpiPen", "What nut problem does my son have?",
     "What emergency injector does my child keep in his bag?"),
    ("My daughter Maya's shoe size is EU 32", "What footwear fits my girl?",
     "Which number should I look for when buying sneakers for my little one?"),
    ("Grandma Rosa lives at the Sunny Meadows care home, room 214",
     "Where does my grandmother stay now?", "Which door number is nana behind?"),
    ("My husband David is lactose intolerant", "What can't my partner digest?",
     "Which dairy issue does my spouse have?"),
    ("Our wedding anniversary is 22 June", "When did we tie the knot?",
     "Which date do we celebrate as a couple each summer?"),
    ("Best friend: Kenji Watanabe, lives in Osaka, birthday 9 November",
     "Which Japanese city is my closest mate in?",
     "When should I send a card to my oldest buddy?"),
    ("My brother Tom's kids are Ella (7) and Finn (4)", "What are my nephew and niece called?",
     "How old are my sibling's children?"),
    ("Aunt Carmen is vegan, so no meat or dairy when she visits",
     "What should I cook when my auntie comes over?", "Any food rules for my auntie?"),
    ("Leo's best friend at school is Omar; his mum is Fatima, 07700 900123",
     "Who is my son's closest classmate?",
     "What's the phone number of the mother of my boy's buddy?"),
    ("Maya has swimming lessons on Saturday at 10 at the Riverside pool",
     "When does my daughter have her aquatic class?",
     "Where does my girl learn to paddle at the weekend?"),
    ("My in-laws, Peter and Gloria, live in Bristol", "Where do my spouse's parents reside?",
     "What are my husband's folks called?"),
    ("Dad's phone number is 0161 496 0872", "How do I reach my father by telephone?",
     "What digits do I dial for my old man?"),
    ("My cousin Priya is a nurse at St Mary's hospital",
     "Which of my relatives works in healthcare?",
     "Where does my relative in the medical field work?"),
    ("Leo's birthday is 2 August; he wants a LEGO train set", "What present does my son want?",
     "When does my boy turn a year older?"),
    ("Mum takes her tea with milk and two sugars", "How does my mother like her cuppa?",
     "How sweet should I make my mom's brew?"),
    ("My godson Samuel turns 18 on 30 October", "When does my godchild become an adult?",
     "How old will my godchild be this autumn?"),
    ("Grandpa Ivan served in the navy for twenty years",
     "Which military branch was my grandfather in?", "How long was granddad at sea?"),
    ("Maya is scared of the dark and sleeps with a night light",
     "What frightens my daughter at bedtime?", "Why does my girl need a lamp on overnight?"),
    ("My stepmother is called Helen and she teaches piano",
     "What instrument does my dad's wife give lessons in?",
     "What is my father's second wife's name?"),
    ("Anna's kids call me Tata", "What nickname do my niece and nephew use for me?",
     "How do my sister's children address me?"),
    ("David's shirt size is L, trousers 34/32", "What clothes fit my husband?",
     "Which waist and leg measurement suits my partner?"),
    ("Family group chat is on Signal, called 'Kowalski Clan'",
     "Which messaging app do my relatives use?", "What is our household's thread named?"),
]  # fmt: skip

HEALTH: list[Fact] = [
    ("I'm allergic to penicillin", "Which antibiotic can't I take?",
     "Is there any medicine that gives me a reaction?"),
    ("My blood type is O negative", "What kind of donor am I?",
     "Which transfusion group do I need?"),
    ("I take 50 mcg of levothyroxine every morning before breakfast",
     "What thyroid pill am I on?", "Which dose of hormone do I swallow on waking?"),
    ("GP: Dr. Miriam Okafor at Hillside Surgery, 020 7946 0321",
     "Who is my family doctor?", "Which practice do I ring to book a checkup?"),
    ("Dentist appointment every six months with Dr. Lindqvist on Harbour Street",
     "Who checks my teeth?", "Where do I go for a filling?"),
    ("My eye prescription is -2.25 left and -2.50 right", "How short-sighted am I?",
     "What lens strength do my glasses need?"),
    ("I get migraines when I skip meals or sleep badly", "What triggers my headaches?",
     "Why do I get those bad head pains?"),
    ("Asthma: blue Ventolin inhaler, two puffs when wheezy",
     "What do I use when I can't breathe well?",
     "How many sprays of my reliever should I take?"),
    ("My cholesterol was 5.8 mmol/L at the last test in January", "What was my lipid level?",
     "How high were my blood fats at the checkup?"),
    ("Physiotherapy for my left knee on Wednesdays at 5pm",
     "When do I get treatment for my injured joint?", "Which leg is being rehabilitated?"),
    ("I can't eat gluten: coeliac disease diagnosed in 2016",
     "Why do I avoid bread and pasta?", "When did I find out I'm intolerant to wheat?"),
    ("My therapist is Jonas Berg, sessions on Monday evenings online",
     "Who do I talk to about my mental health?", "When is my weekly counselling call?"),
    ("Last tetanus shot: September 2021", "When was I last vaccinated against lockjaw?",
     "Am I due for a booster after cutting myself?"),
    ("I'm allergic to birch pollen; cetirizine from April to June",
     "Which tree makes me sneeze?", "What hay fever tablet do I take in spring?"),
    ("Resting heart rate is usually around 58 bpm", "What's my normal pulse?",
     "How fast does my ticker beat when I'm relaxed?"),
    ("Melatonin 1 mg helps me sleep after long flights", "What helps with my jet lag?",
     "What supplement do I use to nod off after crossing time zones?"),
    ("My back pain gets worse if I sit more than two hours", "What makes my spine ache?",
     "Why should I stand up regularly at my desk?"),
    ("Dermatologist said to use SPF 50 because of my moles",
     "How strong should my sunscreen be?",
     "Why does the skin doctor want me protected from UV?"),
    ("I stopped drinking alcohol on 1 February 2023", "Since when have I been sober?",
     "When did I give up booze?"),
    ("Hearing test showed slight loss in my right ear", "Which side do I hear worse on?",
     "What did the audiology check find?"),
    ("Vitamin D: 1000 IU daily in winter", "How much of the sunshine supplement do I take?",
     "What do I swallow in the cold months for my bones?"),
    ("My weight goal is 72 kg by the summer", "How heavy do I want to be?",
     "What number am I aiming for on the scales?"),
    ("Blood donation: I'm on the register, last gave on 12 May",
     "When did I last visit the transfusion service?", "Am I signed up to give plasma?"),
    ("Orthodontist fitted my retainer; wear it every night",
     "What do I put in my mouth before bed?",
     "How often do I need the brace thing for my teeth?"),
    ("Insulin pen for my dad is kept in the fridge door",
     "Where is my father's diabetes medicine stored?",
     "Where do we keep the injections for the old man?"),
    ("Gym injury: torn rotator cuff in the right shoulder, 2022",
     "Which arm did I hurt lifting weights?", "What's the old weightlifting damage I have?"),
]  # fmt: skip

WORK: list[Fact] = [
    ("I work as a data analyst at Northwind Logistics", "What's my job?",
     "Which company employs me?"),
    ("My manager is Sofia Reyes", "Who is my boss?", "Who do I report to?"),
    ("Daily stand-up at 9:15 on Zoom", "When is our morning team meeting?",
     "What time does the quick sync with colleagues start?"),
    ("Payday is the 25th of each month", "When do I get my salary?",
     "Which day does the money land in my account?"),
    ("My employee ID is NW-48213", "What number identifies me on the staff system?",
     "What's my badge code at the company?"),
    ("Office: 4th floor, desk 17B, Canary Wharf building", "Where do I sit at the workplace?",
     "Which level is my workstation on?"),
    ("I have 27 days of annual leave, 9 left this year", "How many holidays remain?",
     "How much vacation am I entitled to?"),
    ("IT helpdesk extension is 4400", "How do I call tech support?",
     "What number do I ring when my laptop breaks?"),
    ("Performance review is in the first week of December", "When is my appraisal?",
     "When does my boss evaluate my year?"),
    ("I work from home on Mondays and Fridays", "Which days am I remote?",
     "When don't I need to commute?"),
    ("Project Falcon deadline: 30 September", "When is the big assignment due?",
     "By when do we have to finish the current major piece of work?"),
    ("My salary is £52,000 before tax", "How much do I earn a year?", "What's my gross pay?"),
    ("Colleague Raj covers for me when I'm off", "Who is my backup at the job?",
     "Who takes over my tasks during vacation?"),
    ("Company pension: 5% from me, 7% from Northwind",
     "How much goes into my retirement fund?",
     "What's the employer's contribution to my retirement savings?"),
    ("The VPN password resets every 90 days",
     "How often must I change my remote access login?",
     "When does the network credential expire?"),
    ("I'm studying for the AWS Solutions Architect exam in November",
     "Which certification am I preparing for?", "When is my cloud test?"),
    ("Client contact at Acme: Lena Hoffmann, lena.h@acme.example",
     "Who is my main customer person?", "Which email do I write to for the account I serve?"),
    ("Expenses must be submitted by the 5th of the following month",
     "When is the deadline for claiming costs back?", "By which day do I file receipts?"),
    ("My LinkedIn headline: 'Turning messy data into decisions'",
     "What does my professional profile tagline say?", "What slogan did I write for networking?"),
    ("Team lunch every last Friday of the month at Nando's",
     "When is the monthly group meal with colleagues?",
     "Where do we go for the staff outing to eat?"),
    ("My contract notice period is three months", "How long must I wait after resigning?",
     "How much warning do I give before quitting?"),
    ("Night shift rota: I'm on call every fourth weekend",
     "How often am I the emergency contact outside hours?",
     "Which Saturdays and Sundays do I have pager duty?"),
]  # fmt: skip

HOME: list[Fact] = [
    ("Wi-Fi password: blue-heron-2741", "How do guests get online?",
     "What's the code for the internet at home?"),
    ("The spare key is with our neighbour Mr. Adeyemi at number 12",
     "Who can let me in if I'm locked out?", "Which door nearby do I knock on when locked out?"),
    ("Bins: recycling goes out on Wednesday night, general waste every other Thursday",
     "When do I put the rubbish out?", "Which evening is for the cans and cardboard?"),
    ("Boiler service due in October; engineer is GasSafe Mike, 07700 900456",
     "When does the heating system need checking?", "Who fixes our hot water?"),
    ("Landlord: Mrs. Chen, rent £1,250 due on the 1st", "Who owns the flat I live in?",
     "How much do I pay to live here each month?"),
    ("Water stopcock is under the kitchen sink behind the bleach",
     "How do I shut off the supply if a pipe bursts?", "Where's the main valve?"),
    ("Fuse box is in the cupboard under the stairs", "Where do I reset the electrics?",
     "Where's the breaker panel?"),
    ("Alarm code for the house: 8054", "What do I type to disarm the security system?",
     "What digits stop the burglar alert?"),
    ("Our address is 27 Willow Lane, Bath BA2 4QT", "Where do I live?",
     "What postcode do I give for deliveries?"),
    ("Living room paint: Farrow & Ball 'Hague Blue'", "What colour are the lounge walls?",
     "Which shade do I buy for touch-ups downstairs?"),
    ("The dishwasher takes Finish Quantum tablets",
     "Which detergent goes in the machine for plates?", "What pods do I buy for washing up?"),
    ("Bulbs in the hallway are E27, 9W warm white", "What fitting do the corridor lamps need?",
     "Which light should I get for the entrance?"),
    ("Home insurance with Aviva, policy AV-553920, renews 1 July", "Who insures our house?",
     "When does the property cover come up for renewal?"),
    ("Electricity meter reading in March was 43817", "What was the last power usage figure?",
     "What number did the electric meter show in spring?"),
    ("Cleaner Marta comes every second Tuesday, £15 per hour",
     "How much do I pay the housekeeper?", "When does the person who tidies up come?"),
    ("Router admin login is admin / Heron!Box99", "How do I get into the modem settings?",
     "What are the credentials for the network box?"),
    ("The garage door opener battery is a CR2032",
     "Which coin cell does the remote for the car port need?",
     "What should I buy when the clicker for the carport dies?"),
    ("We moved into this house on 15 August 2018", "How long have we lived here?",
     "Which date did we arrive at this place?"),
    ("Council tax band C, £1,480 a year, paid by direct debit",
     "How much are local rates on the property?",
     "Which bracket does our home fall in for the local levy?"),
    ("Smoke alarm batteries were replaced on 3 January",
     "When did I last change the fire detector's cells?",
     "When did the ceiling beeper get fresh power?"),
    ("Plumber who fixed the leak: Dave Hughes, 01225 555 019",
     "Who sorted out the dripping pipe?", "What number is the tradesman for water problems?"),
    ("Garden: tomatoes and basil on the south-facing balcony", "What vegetables do I grow?",
     "Which herbs are outside on the terrace?"),
]  # fmt: skip

TRAVEL: list[Fact] = [
    ("Passport number 533218774, expires 11 June 2029",
     "When does my travel document run out?", "What is my ID for flying abroad?"),
    ("Frequent flyer: British Airways Executive Club 40012877",
     "What's my airline loyalty number?", "Which miles programme am I a member of?"),
    ("Favourite holiday spot: Porto, stayed at Casa do Rio twice",
     "Where do I love going on vacation?", "Which Portuguese city do I keep returning to?"),
    ("Next trip: Iceland from 3 to 10 February, flight FI451",
     "Where am I going this winter?", "When do I leave for Reykjavik?"),
    ("I get seasick on ferries, so take Stugeron an hour before",
     "What helps me on boat crossings?", "What do I swallow before sailing?"),
    ("Travel insurance: annual policy with Staysure, ref SS-20931",
     "Which company covers me abroad?", "What's the reference for my trip cover?"),
    ("ESTA approved until March 2026", "Until when can I enter the United States visa-free?",
     "When does my American entry authorisation expire?"),
    ("Preferred seat on planes: aisle, near the front", "Where do I like to sit when flying?",
     "Window or corridor, when I book an airline ticket?"),
    ("Train season ticket Bath to London, £9,840 a year", "How much is my commute pass?",
     "What does the rail pass to the capital cost me annually?"),
    ("Hotel in Rome for May: Hotel Artemide, booking ref 88XJ2Q",
     "Where are we staying in Italy?",
     "What's the confirmation code for the accommodation in the spring?"),
    ("Driving licence expires on 4 April 2031", "When must I renew my permit to drive?",
     "Until when is my motoring card valid?"),
    ("We always rent a car from Sixt at Faro airport",
     "Which hire company do we use in the Algarve?",
     "Where do we pick up a vehicle in Portugal?"),
    ("My suitcase is a grey Samsonite with a yellow ribbon on the handle",
     "How do I recognise my bag at the carousel?", "What does my luggage look like?"),
    ("Japan trip in 2017: climbed Mount Fuji on 14 August",
     "When did I reach the top of that volcano?", "Which peak did I hike in Asia?"),
    ("Dream destination: Patagonia, to hike the W Trek",
     "Where do I most want to go someday?", "Which South American adventure is on my bucket list?"),
    ("Currency left over: about 120 euros in the desk drawer",
     "How much foreign cash do I have?", "Where's the spare money for the continent?"),
    ("Plug adapters for the US and Europe are in the blue toiletry bag",
     "Where are the converters for foreign sockets?",
     "Where do I keep the things for charging gadgets overseas?"),
    ("Camping gear is stored in the loft: tent, two sleeping bags, stove",
     "Where is our outdoor equipment?", "What do we have for nights in the wild?"),
]  # fmt: skip

TASTES: list[Fact] = [
    ("I hate coriander; it tastes like soap to me", "Which herb do I dislike?",
     "What should restaurants leave out of my dish?"),
    ("Coffee order: oat flat white, extra hot", "How do I take my morning drink at the café?",
     "What's my usual at Starbucks?"),
    ("Favourite restaurant: Dishoom, the black daal", "Where do I like eating out most?",
     "What's my go-to meal at my top place?"),
    ("I'm pescatarian: fish yes, no meat", "What kind of diet do I follow?",
     "Do I eat chicken?"),
    ("Favourite colour is emerald green", "Which hue do I like best?",
     "What shade should a gift for me be?"),
    ("Favourite band: Radiohead; best album OK Computer",
     "Which group do I listen to most?", "What record do I consider the greatest?"),
    ("At the cinema I book row G, in the middle", "Where do I like to sit at the movies?",
     "Which seats do I pick for films?"),
    ("Wine: I like dry Riesling, not red", "What white do I drink?",
     "Which grape should be ordered for me at dinner?"),
    ("My go-to karaoke song is 'Dancing Queen'",
     "What do I sing at parties with a microphone?", "Which ABBA track is my party piece?"),
    ("Ice cream: pistachio, always", "Which frozen dessert flavour is my favourite?",
     "What flavour of gelato should I get for me?"),
    ("I don't like surprise parties", "How do I feel about unexpected celebrations?",
     "Should my friends throw me a secret bash?"),
    ("Perfume: Jo Malone Wood Sage & Sea Salt", "Which fragrance do I wear?",
     "What scent should I buy as a refill?"),
    ("After 3pm I switch from coffee to chamomile or rooibos",
     "What do I drink in the afternoon?", "Which caffeine-free brews do I like?"),
    ("Favourite book: 'The Remains of the Day' by Kazuo Ishiguro",
     "Which novel do I love most?", "Who wrote my all-time top read?"),
    ("Spicy food: medium heat at most, chilli upsets my stomach",
     "How much heat can I handle in curries?", "Should I order the fiery version?"),
    ("Favourite football team: Bristol City", "Which club do I support?",
     "Who do I cheer for in soccer?"),
    ("I sleep best at 18°C with the window open", "What temperature do I like the bedroom?",
     "How cool should the room be at night?"),
    ("Pizza order: margherita with extra basil and olives",
     "What do I get from the Italian takeaway?", "Which toppings do I like on a pie?"),
    ("Preferred pronouns: she/her", "How should people refer to me?",
     "Which words do I use for myself in the third person?"),
    ("I'm a morning person: up at 5:30, in bed by 10", "When do I usually wake?",
     "What time do I go to sleep?"),
    ("Allergic to shellfish: prawns and crab cause hives", "Which seafood must I avoid?",
     "What gives me a rash at dinner?"),
    ("Favourite flowers are peonies, pale pink", "Which blooms make me happy?",
     "What should someone bring me as a bouquet?"),
]  # fmt: skip

NUMBERS: list[Fact] = [
    ("Bike lock combination: 3-9-1-6", "How do I open the padlock on my bicycle?",
     "What are the digits for the cycle chain?"),
    ("Gym locker 118, code 2604", "Which cabinet is mine at the fitness club?",
     "What do I enter to open my storage at the fitness club?"),
    ("Library card number 20038 7719 4402", "What number do I use to borrow books?",
     "What ID do I give to take out novels?"),
    ("National Insurance number: QQ 12 34 56 C",
     "What's my social security number in Britain?", "Which ID does HMRC know me by?"),
    ("Car registration plate: LK19 RPT", "What's the number on my vehicle?",
     "What's written on the front of my motor?"),
    ("The Netflix account is under dkowalski@example.com",
     "Which email logs into the streaming service?", "What login do we use for films on TV?"),
    ("PIN for the work phone is 7315", "How do I unlock my office mobile?",
     "What's the passcode for the company handset?"),
    ("Parking permit number for our street: BA-0973, zone C",
     "Which zone can I leave the car in near home?", "What's the ID on the windscreen sticker?"),
    ("Shoe size: UK 7, or 40.5 in European sizes", "What size are my feet?",
     "What do I ask for at the footwear shop?"),
    ("Ring size is N", "What band fits my finger?",
     "What should a jeweller know for an engagement present for me?"),
    ("Bank sort code 20-45-77, account ending 3391",
     "What details do I give for a transfer to me?",
     "What are the last digits of my current account?"),
    ("My height is 168 cm", "How tall am I?", "What's my stature in centimetres?"),
    ("Safe in the wardrobe opens with 5521", "How do I get into the strongbox?",
     "What's the combination for the hidden lockbox in the bedroom?"),
    ("Mobile number: 07700 900818", "What's my cell?",
     "Which digits do people text to reach me?"),
    ("Door code at Anna's building in Lyon: 4B27",
     "How do I get into my sister's apartment block?", "What do I type at the entrance in France?"),
    ("Spotify family plan costs £19.99 a month", "How much is the music subscription?",
     "What do we pay for streaming songs?"),
    ("Order number for the new sofa: IKEA 1187-334-902, delivery 18 March",
     "When is the couch arriving?", "What reference tracks the furniture delivery?"),
    ("Tax reference (UTR): 84927 10365", "What's my self-assessment number?",
     "Which code do I quote to the revenue office?"),
    ("Clothing: I wear a size 12 dress, M in tops", "What size should a gift blouse be?",
     "What frock measurement fits me?"),
    ("Octopus Energy account A-7F3C21", "Who supplies our electricity?",
     "What's my reference with the power company?"),
    ("Amazon Prime renews on 2 November for £95",
     "When is the annual online shopping membership charged?",
     "How much is the yearly fee for fast delivery?"),
    ("Storage unit 3C at Big Yellow, padlock key on the red keyring",
     "Where is the extra stuff kept?", "Which locker do we hire for boxes?"),
]  # fmt: skip

DATES: list[Fact] = [
    ("My friend Chloe marries on 12 September in Edinburgh",
     "Which ceremony am I attending in the Scottish capital?",
     "What big celebration do I have in the autumn?"),
    ("Car MOT due 19 November", "When does my vehicle need its annual check?",
     "When is the roadworthiness test?"),
    ("My parents' ruby anniversary is on 5 July", "When did my mother and father marry?",
     "Which date should we plan the family party for their 40 years?"),
    ("Started my job at Northwind on 6 January 2020", "When did I join the company?",
     "How long have I been at my current employer?"),
    ("Gym membership ends 31 May unless cancelled",
     "When does my fitness club subscription stop?", "By when do I need to quit the gym?"),
    ("Tenancy agreement ends on 28 February", "When does our rental contract run out?",
     "When must we renew with the landlord?"),
    ("Leo's parents' evening is on 21 November at 6pm", "When do I meet my son's teacher?",
     "What time is the school conference?"),
    ("Flu jab booked for 8 October at Boots", "When am I getting vaccinated for influenza?",
     "Where is my seasonal shot?"),
    ("Quit smoking on 1 January 2019", "How long have I been off cigarettes?",
     "When did I stop lighting up?"),
    ("Our first date was at the Blue Note jazz club, 14 February 2011",
     "Where did my husband and I first go out?", "When did my romance with David begin?"),
    ("Book club meets the first Thursday of the month at 7pm", "When is the reading group?",
     "Which evening do we discuss novels?"),
    ("Piano lessons for Maya: Wednesdays 4:30 with Helen", "When is my girl's music class?",
     "Who teaches my daughter to play?"),
    ("Half marathon in Bath on 16 March, target 1:55", "What race am I training for?",
     "What finishing time am I hoping for?"),
    ("The car's warranty runs out in June 2026", "Until when is my vehicle guaranteed?",
     "When does the manufacturer's cover end?"),
    ("My dry cleaning ticket is 0452, ready Saturday",
     "When can I pick up my suit from the cleaners?", "What number is on the laundry stub?"),
    ("Maya's school holidays start on 19 July", "When does my daughter break up for summer?",
     "When is the last day of term for my girl?"),
]  # fmt: skip

PASTIMES: list[Fact] = [
    ("Car: 2019 Toyota Yaris hybrid, silver", "What do I drive?",
     "Which model is my vehicle?"),
    ("Tyre pressure for the Yaris: 2.3 bar front, 2.2 rear",
     "How much air do the wheels need?", "What should I inflate the tires to?"),
    ("Parking at work: level -2, bay 48", "Where do I leave the car at the office?",
     "Which spot in the basement is mine?"),
    ("Breakdown cover with the AA, membership 6354 2210 9981",
     "Who do I call if the car won't start on the road?",
     "What's my roadside assistance number?"),
    ("Bike: blue Brompton, frame number 2187745", "What kind of bicycle do I have?",
     "How would police identify my folding cycle if it's stolen?"),
    ("I take the 7:42 train from Bath Spa on office days",
     "Which departure do I catch to work?", "When does my commute leave in the morning?"),
    ("I play bass guitar in a band called The Night Owls", "What instrument do I play?",
     "What's the name of my group?"),
    ("Climbing grade: I lead 6b indoors", "What level am I at on the wall?",
     "What routes can I manage at the indoor crag?"),
    ("Learning Spanish on Duolingo, 412-day streak", "Which language am I studying?",
     "How long have I kept practising every day?"),
    ("My chess rating on lichess is about 1650",
     "How good am I at the board game with kings and queens?",
     "What's my online score for that strategy game?"),
    ("I knit: currently making a cable jumper for David", "What craft project am I working on?",
     "What am I making with yarn?"),
    ("Favourite podcast: 'No Such Thing As A Fish'", "Which show do I listen to on my commute?",
     "What audio programme do I recommend?"),
    ("I ran my first marathon in London in 4:12:33",
     "How fast did I finish the 26-mile race?", "Where did I do my first long-distance run?"),
    ("Photography: I shoot on a Fujifilm X-T4 with a 23mm lens", "Which camera do I use?",
     "What gear do I take pictures with?"),
    ("Volunteer at the food bank on Saturday mornings", "Where do I help out at weekends?",
     "What charity work do I do?"),
    ("Sourdough starter is called Clint and lives in the fridge",
     "What did I name my bread yeast?", "Where do I keep the fermented dough culture?"),
]  # fmt: skip

FACTS: list[Fact] = [
    *PETS,
    *FAMILY,
    *HEALTH,
    *WORK,
    *HOME,
    *TRAVEL,
    *TASTES,
    *NUMBERS,
    *DATES,
    *PASTIMES,
]

# The distractors' words. Names, places, shops and pets' names are none of those in FACTS
# (`check`): a note about them answers no question.
NAMES = [
    "Aiko", "Bruno", "Chidi", "Dmitri", "Elif", "Farah", "Gustavo", "Hana", "Idris", "Jana",
    "Kofi", "Lucia", "Mateo", "Nadia", "Oskar", "Paula", "Quentin", "Rania", "Santiago",
    "Tereza", "Umar", "Vera", "Wojtek", "Ximena", "Yusuf", "Zofia", "Arjun", "Beatriz",
    "Cormac", "Dalia", "Emeka", "Freya", "Goran", "Hiroshi", "Ines", "Joaquin", "Katya",
    "Luca", "Mirela", "Nikolai",
]  # fmt: skip
CITIES = [
    "Ghent", "Tallinn", "Valencia", "Krakow", "Leipzig", "Bergen", "Turin", "Seville",
    "Galway", "Ljubljana", "Tbilisi", "Hanoi", "Montreal", "Antwerp", "Gdansk", "Bologna",
    "Cork", "Utrecht", "Salzburg", "Vilnius",
]  # fmt: skip
SHOPS = [
    "Tesco", "Lidl", "Aldi", "Waitrose", "the market", "the corner shop", "Wilko",
    "the hardware store", "the chemist", "the garden centre", "Sainsbury's", "the bakery",
]  # fmt: skip
STREETS = [
    "Mill Road", "Regent Street", "Station Road", "Church Lane", "Victoria Road", "Park Avenue",
    "Market Square", "Bridge Street", "Kingsway", "Orchard Close",
]  # fmt: skip
ITEMS = [
    "printer paper", "AA batteries", "stamps", "envelopes", "rice", "laundry liquid",
    "bin bags", "kitchen roll", "olive oil", "tinned tomatoes", "lemons", "oats", "eggs",
    "sellotape", "a birthday card", "parcel tape", "a new mop head", "shoe polish",
    "sponges", "matches", "light bulbs for the shed", "coffee filters", "honey", "flour",
    "bicarbonate of soda", "a phone charger", "screen wipes", "picture hooks", "string",
    "freezer bags",
]  # fmt: skip
GENRES = [
    "crime", "science fiction", "historical", "comedy", "nature", "war", "romantic",
    "horror", "travel", "cooking",
]  # fmt: skip
MEDIA = ["novel", "documentary", "series", "podcast episode", "graphic novel", "film"]
ADJECTIVES = [
    "Silent", "Crimson", "Hidden", "Last", "Frozen", "Golden", "Broken", "Distant", "Hollow",
    "Quiet", "Wandering", "Burning", "Forgotten", "Northern", "Paper",
]  # fmt: skip
THINGS = [
    "Harbour", "Orchard", "Lighthouse", "Garden", "Kingdom", "Letter", "Mirror", "River",
    "Station", "Winter", "Engine", "Island", "Archive", "Circus", "Map",
]  # fmt: skip
FEATURES = [
    "huge balcony", "tiny kitchen", "view of the cathedral", "wood stove", "roof terrace",
    "spiral staircase", "shared courtyard", "bay window", "very noisy neighbour",
    "bathroom with no window",
]  # fmt: skip
DISHES = [
    "risotto", "lentil soup", "a frittata", "stuffed peppers", "a tray bake", "noodle soup",
    "a galette", "a chickpea stew", "fish tacos", "a barley salad", "dumplings",
    "a mushroom pie",
]  # fmt: skip
INGREDIENTS = [
    "leeks", "lemon zest", "smoked paprika", "feta", "spinach", "butternut squash",
    "walnuts", "miso", "fennel", "sweet potato", "capers", "tarragon", "ginger", "halloumi",
]  # fmt: skip
GIFTS = [
    "a pasta machine", "a pottery class", "a star map", "concert tickets", "a hammock",
    "a bonsai tree", "a fountain pen", "a cookbook from Georgia", "a board game",
    "a photo book", "a vinyl record player", "a hot-air balloon ride",
]  # fmt: skip
TOPICS = [
    "budget", "newsletter", "office move", "charity raffle", "quarterly report", "website",
    "summer fair", "survey results", "supplier invoices", "training day",
]  # fmt: skip
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip
TIMES = ["8:40", "10:45", "11:20", "12:30", "13:05", "14:10", "15:45", "16:50", "19:40", "20:15"]
PRICES = ["£2.49", "£3.80", "£4.15", "£6.99", "£1.20", "£11.50", "£8.75", "£0.89", "£5.60"]
SOURCES = ["the paper", "a magazine", "a museum leaflet", "a blog", "the newsletter"]
TRIVIA = [
    "honey never spoils", "octopuses have three hearts", "bananas are berries",
    "a day on Venus is longer than its year", "wombats leave cube-shaped droppings",
    "the Eiffel Tower grows taller in summer", "sea otters hold hands while sleeping",
    "there are more trees on Earth than stars in the galaxy",
    "sharks are older than trees", "a group of crows is called a murder",
    "the first oranges were green", "snails can sleep for three years",
    "butterflies taste with their feet", "lightning is hotter than the sun's surface",
    "the inventor of the frisbee was turned into a frisbee",
    "koalas have fingerprints like ours", "glass is made mostly of sand",
    "hot water can freeze faster than cold", "the moon moves away a little every year",
    "Scotland's national animal is the unicorn",
]  # fmt: skip
VENUES = [
    "bakery", "bookshop", "launderette", "post office", "cafe", "florist", "cinema",
    "swimming baths", "repair shop", "pub",
]  # fmt: skip
VENUE_NEWS = [
    "closes early on Sundays now", "is being renovated until spring", "has a new owner",
    "takes cards only", "started a loyalty stamp card", "is hiring for weekends",
    "has moved two doors down", "runs a quiz every other week",
]  # fmt: skip
OPINIONS = [
    "too long in the middle", "the ending was confusing", "worth a second watch",
    "beautiful music", "the sequel is better", "fell asleep halfway",
]  # fmt: skip
BORROWED = [
    "ladder", "tent pegs", "cake tin", "drill", "projector", "umbrella", "camping chairs",
    "jump leads", "sewing machine", "hedge trimmer",
]  # fmt: skip
CUISINES = ["Ethiopian", "Georgian", "Peruvian", "Korean", "Lebanese", "Vietnamese", "Sri Lankan"]
LANDMARKS = [
    "the old town hall", "the canal bridge", "the football ground", "the library",
    "the bus station", "the clock tower", "the retail park",
]  # fmt: skip
WEATHER = [
    "heavy rain", "strong winds", "the first frost", "thunderstorms", "thick fog",
    "a heatwave", "snow on the hills",
]  # fmt: skip
ADVICE = [
    "bring the garden chairs in", "cancel the picnic", "take the bus instead of walking",
    "close the skylight", "move the barbecue to next week", "dry the washing indoors",
]  # fmt: skip
EVENTS = [
    "the street fair", "the quiz night", "the craft market", "the choir concert",
    "the open-air film", "the plant swap", "the charity run", "the jumble sale",
]  # fmt: skip
OTHER_PETS = ["tortoise", "rabbit", "guinea pig", "ferret", "cockatiel", "gecko", "labrador"]
PET_NAMES = ["Pebble", "Biscuit", "Noodle", "Pepper", "Socks", "Waffles", "Ziggy", "Juniper"]
PET_NEWS = [
    "escaped from the garden again", "won a ribbon at the village show",
    "needs someone to feed it next weekend", "has learned to open the fridge",
    "is on a diet", "turned ten last week",
]  # fmt: skip
OCCASIONS = ["a rainy Sunday", "the bank holiday", "the next team social", "a quiet evening"]
PLANS = [
    "bake bread and watch an old film", "a walk along the canal", "a trip to the coast",
    "a jigsaw and soup", "board games at the community centre", "visit the botanical garden",
]  # fmt: skip
LIFE_EVENTS = [
    "job interview", "house move", "driving test", "dissertation", "first week at university",
    "kitchen renovation", "tango competition",
]  # fmt: skip
HOW_TO = [
    "how to descale a kettle", "how to bleed a radiator", "how to get wax out of a tablecloth",
    "how long to boil a duck egg", "how to fold a fitted sheet", "how to repot an orchid",
    "how to sharpen a kitchen knife", "how to unblock a shower drain",
]  # fmt: skip
CLUBS = ["the allotment society", "the residents' association", "the running club", "choir"]
TOOLS = [
    "pressure washer", "carpet cleaner", "wheelbarrow", "gazebo", "pasta maker", "tile cutter",
]  # fmt: skip
MEETINGS = ["residents' meeting", "parents' forum", "allotment meeting", "neighbourhood watch"]
DECISIONS = [
    "the hedges get trimmed in May", "a bench goes by the pond", "the summer fete moves to June",
    "new bike racks by the shops", "the noticeboard gets a lock", "a litter pick every quarter",
]  # fmt: skip
EXERCISES = ["skipping", "stretching", "a brisk walk", "yoga", "a few press-ups", "cycling"]
MINUTES = ["ten", "fifteen", "twenty", "thirty", "forty-five"]

SLOTS: dict[str, list[str]] = {
    "name": NAMES, "city": CITIES, "shop": SHOPS, "street": STREETS, "item": ITEMS,
    "genre": GENRES, "medium": MEDIA, "adjective": ADJECTIVES, "thing": THINGS,
    "feature": FEATURES, "dish": DISHES, "ingredient": INGREDIENTS, "gift": GIFTS,
    "topic": TOPICS, "weekday": WEEKDAYS, "month": MONTHS, "time": TIMES, "price": PRICES,
    "source": SOURCES, "trivia": TRIVIA, "venue": VENUES, "venue_news": VENUE_NEWS,
    "opinion": OPINIONS, "borrowed": BORROWED, "cuisine": CUISINES, "landmark": LANDMARKS,
    "weather": WEATHER, "advice": ADVICE, "event": EVENTS, "pet": OTHER_PETS,
    "pet_name": PET_NAMES, "pet_news": PET_NEWS, "occasion": OCCASIONS, "plan": PLANS,
    "life_event": LIFE_EVENTS, "how_to": HOW_TO, "club": CLUBS, "tool": TOOLS,
    "meeting": MEETINGS, "decision": DECISIONS, "exercise": EXERCISES, "minutes": MINUTES,
}  # fmt: skip
ENTITIES = (NAMES, CITIES, STREETS, PET_NAMES)  # proper names: none may appear in FACTS
KINDS_OF_STREET = {"road", "street", "lane", "avenue", "square", "close"}
TEMPLATES = [
    '{name} recommended the {genre} {medium} "The {adjective} {thing}"',
    "Pick up {item} and {item2} from {shop} on {weekday}",
    "Buy {item} before the weekend; {shop} has it on offer",
    "{name}'s new flat in {city} has a {feature}",
    "Recipe to try: {dish} with {ingredient} and {ingredient2}",
    "Gift idea for {name}: {gift}",
    "Call with {name} about the {topic} moved to {weekday} at {time}",
    "Read in {source} that {trivia}",
    "Price check: {item} was {price} at {shop}",
    "The {venue} on {street} {venue_news}",
    "{name} is moving to {city} in {month}",
    'Watched "The {adjective} {thing}" at {name}\'s place: {opinion}',
    "Give the {borrowed} back to {name} by {weekday}",
    "{name} says the {cuisine} place near {landmark} is worth a try",
    "Forecast for {weekday}: {weather}, so {advice}",
    "{name} mentioned that {event} near {landmark} starts at {time} on {weekday}",
    "{name}'s {pet} {pet_name} {pet_news}",
    "Idea for {occasion}: {plan}",
    "Ask {name} how the {life_event} went",
    "Look up {how_to}",
    "{name} from {club} can lend us a {tool}",
    "From the {meeting}: {decision}",
    "{name} and {name2} are hosting a dinner in {city} in {month}",
    "Try {minutes} minutes of {exercise} on {weekday} mornings, as {name} suggested",
]
SEED = 20_250


def facts(count: int | None = None) -> list[Fact]:
    """`count` facts spread over every kind (all of them without a count)."""
    if count is None or count >= len(FACTS):
        return list(FACTS)
    step = len(FACTS) / count
    return [FACTS[int(i * step)] for i in range(count)]


def _filled(template: str, rng: random.Random) -> str:
    """`template` with each slot a word of its list ("item2": another item than "item")."""
    chosen: dict[str, str] = {}
    for _, slot, _, _ in string.Formatter().parse(template):
        if slot and slot not in chosen:
            options = [w for w in SLOTS[slot.rstrip("0123456789")] if w not in chosen.values()]
            chosen[slot] = rng.choice(options)
    note = template.format(**chosen)
    return note[0].upper() + note[1:]


def distractors(count: int, seed: int = SEED) -> list[str]:
    """`count` distinct notes, the same every time; the first n of a longer list are the n of
    a shorter one."""
    rng, made = random.Random(seed), dict[str, None]()
    while len(made) < count:
        made[_filled(rng.choice(TEMPLATES), rng)] = None
    return list(made)


STOPWORDS = frozenset([
    "a", "an", "the", "my", "our", "your", "me", "i", "m", "we", "us", "you", "he", "she", "it",
    "his", "her", "its", "their", "they", "them", "him", "what", "which", "who", "whom",
    "whose", "where", "when", "why", "how", "is", "are", "was", "were", "be", "been", "am",
    "do", "does", "did", "don", "can", "should", "must", "will", "would", "to", "of", "in",
    "on", "at", "for", "from", "by", "with", "and", "or", "if", "this", "that", "these",
    "those", "there", "here", "any", "some", "much", "many", "long", "often", "up", "out",
    "over", "about", "after", "before", "into", "off", "s", "t", "ll", "re", "ve", "d",
])  # fmt: skip


def content_words(text: str) -> set[str]:
    """The words of `text` that say something (not "my", "what", "is"...), as search folds them."""
    return {w for w in words(text) if w not in STOPWORDS and not w.isdigit()}


def shared(fact: str, question: str) -> set[str]:
    """The content words a question shares with its fact."""
    return content_words(fact) & content_words(question)


def check(notes: list[str]) -> None:
    """Raise if the set is not what the benchmark says: no fact or question twice, and no
    distractor naming a person, place or pet a fact names, or a number of three digits or
    more that a fact has."""
    texts = [fact for fact, _, _ in FACTS]
    questions = [question for _, *asked in FACTS for question in asked]
    if len(set(texts)) != len(texts) or len(set(questions)) != len(questions) or len(texts) < 200:
        raise ValueError("FACTS: 200 distinct facts or more, with distinct questions")
    said = set().union(*(words(fact) for fact in texts))
    named = [n for entity in ENTITIES for n in entity if (set(words(n)) - KINDS_OF_STREET) & said]
    if named:
        raise ValueError(f"distractors' names that facts use: {named}")
    numbers = set(re.findall(r"\d{3,}", " ".join(texts)))
    clashing = [note for note in notes if set(re.findall(r"\d{3,}", note)) & numbers]
    folded = {fold(fact) for fact in texts}
    if clashing or any(fold(note) in folded for note in notes):
        raise ValueError(f"distractors with a fact's numbers, or a fact: {clashing[:3]}")
